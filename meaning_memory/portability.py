"""Does a PostgreSQL build run on any x86-64 CPU, or only on CPUs like the one it was built on?

A build compiled with ``-march=native`` on a machine with AVX-512 puts AVX-512 instructions into
ordinary functions, and crashes with SIGILL on the many CPUs without them. Portable builds use
AVX-512 only in functions chosen at run time after the CPU was asked (PostgreSQL's
``pg_popcount_avx512``, pgvector's ``BitHammingDistanceAvx512Popcount``, …), whose names say so.

:func:`scan` disassembles the server binary and every shared library of the build with
``objdump -d`` (binutils) and counts EVEX-encoded instructions (the AVX-512 encoding: opcode byte
``62`` after any legacy prefixes, in 64-bit code) outside such functions. VEX-encoded (AVX,
AVX2, FMA, BMI) instructions are allowed: the engine's floor is x86-64-v3.

The byte ``62`` is only an EVEX prefix where an instruction begins. Inside an instruction it is
data: ``movabs $0x3f50624dd2f1a9fc,%rax`` (the double 0.001 in ``contsel``) or the ASCII in
``movabs $0x7962646e617473`` ("standby"). objdump's default listing wraps an instruction after 7
bytes, and a continuation line that starts with such a byte looks like an EVEX instruction to a
scan of that listing (7 in PostgreSQL 18.4's ``postgres``, 4 in 16.14's, none real). The scan
asks for one line per instruction (``-w --insn-width=15``, the longest x86 instruction) and reads
only lines that carry a mnemonic.

``python -m meaning_memory.portability [BUILD_ROOT]`` prints the report (default: the embedded
build) and exits 1 when it finds any.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: A function whose name marks it as an AVX-512 variant chosen at run time.
DISPATCHED = re.compile(r"avx512", re.IGNORECASE)
#: Legacy prefixes that may stand before an EVEX prefix (segment overrides, address size, and
#: the operand-size / repeat / lock bytes objdump may show even where they would fault).
_PREFIXES = frozenset({0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67, 0x66, 0xF2, 0xF3, 0xF0})
_FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
EVEX = 0x62


class ObjdumpMissing(RuntimeError):
    pass


@dataclass
class LibraryReport:
    path: Path
    #: EVEX instructions per function, outside run-time-dispatched functions.
    stray: Counter[str] = field(default_factory=Counter)
    #: EVEX instructions per function inside them (allowed).
    dispatched: Counter[str] = field(default_factory=Counter)

    @property
    def stray_count(self) -> int:
        return sum(self.stray.values())


def objects(root: Path) -> list[Path]:
    """The server binary and every shared library under the build (extensions, encoding
    conversions, libpq): all that a running server may load."""
    found = [root / "bin" / "postgres"]
    found += sorted(
        path for path in (root / "lib").rglob("*.so*") if path.is_file() and not path.is_symlink()
    )
    return [path for path in found if path.exists()]


def _objdump() -> str:
    objdump = shutil.which("objdump")
    if objdump is None:
        raise ObjdumpMissing("objdump not found: install binutils (apt-get install binutils)")
    return objdump


def evex_by_function(path: Path) -> Counter[str]:
    """EVEX-encoded instructions in ``path``'s code, counted per enclosing function."""
    listing = subprocess.run(
        [_objdump(), "-d", "-w", "--insn-width=15", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts: Counter[str] = Counter()
    function = "?"
    for line in listing.splitlines():
        if match := _FUNCTION.match(line):
            function = match.group(1)
            continue
        columns = line.split("\t")
        if len(columns) < 3:  # not an instruction line (or a continuation of bytes)
            continue
        try:
            encoded = [int(byte, 16) for byte in columns[1].split()]
        except ValueError:
            continue
        index = 0
        while index < len(encoded) and encoded[index] in _PREFIXES:
            index += 1
        if index < len(encoded) and encoded[index] == EVEX:
            counts[function] += 1
    return counts


def scan(root: Path) -> list[LibraryReport]:
    reports = []
    for path in objects(root):
        report = LibraryReport(path=path)
        for function, count in evex_by_function(path).items():
            (report.dispatched if DISPATCHED.search(function) else report.stray)[function] = count
        reports.append(report)
    return reports


def describe(root: Path, reports: list[LibraryReport]) -> str:
    """The failure message: each library with stray AVX-512, the count and the functions."""
    bad = [report for report in reports if report.stray_count]
    if not bad:
        allowed = sum(sum(report.dispatched.values()) for report in reports)
        return (
            f"{root}: {len(reports)} objects, no AVX-512 instruction outside run-time-dispatched "
            f"functions ({allowed} inside them)"
        )
    lines = [
        f"{root}: AVX-512 (EVEX) instructions outside run-time-dispatched functions; this build "
        "crashes with SIGILL on CPUs without AVX-512:"
    ]
    for report in bad:
        functions = ", ".join(f"{name} ({count})" for name, count in report.stray.most_common(12))
        more = len(report.stray) - 12
        lines.append(
            f"  {report.path.relative_to(root)}: {report.stray_count} instructions in "
            f"{len(report.stray)} functions: {functions}"
            + (f", and {more} more" if more > 0 else "")
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        root = Path(args[0])
    else:
        from meaning_memory.embedded import install_root

        root = install_root()
    reports = scan(root)
    print(describe(root, reports))
    return 1 if any(report.stray_count for report in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
