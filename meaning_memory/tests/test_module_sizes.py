"""One job per module: no production module over ``LIMIT`` lines (migrations, tests and
benchmarks aside; a tool's output is cut to fit too). The
modules still over it are listed with the size they had when the rule came back, and may not
grow: each leaves the list when it is split (the test says so once it fits), until the list is
empty."""

from __future__ import annotations

from pathlib import Path

from meaning_memory.tests.test_layers import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 450

#: Modules over the limit still to split, and their size then: none may grow.
STILL_TO_SPLIT: dict[str, int] = {}


def production_modules(root: Path = ROOT) -> dict[str, int]:
    """Each production module's path (relative to ``root``) and its number of lines."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).parts
            if "migrations" in parts or "tests" in parts:
                continue
            found["/".join(parts)] = len(path.read_text(encoding="utf-8").splitlines())
    return found


def over_the_limit(sizes: dict[str, int], listed: dict[str, int] | None = None) -> list[str]:
    listed = STILL_TO_SPLIT if listed is None else listed
    problems = []
    for module, lines in sorted(sizes.items()):
        allowed = listed.get(module)
        if allowed is None and lines > LIMIT:
            problems.append(f"{module}: {lines} lines, over {LIMIT}: split it by job")
        elif allowed is not None and lines > allowed:
            problems.append(f"{module}: {lines} lines, grew past {allowed}: split it instead")
        elif allowed is not None and lines <= LIMIT:
            problems.append(f"{module}: {lines} lines now: take it off STILL_TO_SPLIT")
    problems += [f"{m}: listed, but not there" for m in sorted(set(listed) - set(sizes))]
    return problems


def test_no_production_module_is_over_the_limit_or_grows_while_listed():
    sizes = production_modules()
    assert len(sizes) > 150  # the packages were read
    assert over_the_limit(sizes) == []


def test_the_rule_finds_a_module_too_long_a_listed_one_grown_or_split(tmp_path):
    package = tmp_path / "memories"
    (package / "migrations").mkdir(parents=True)
    (package / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (package / "migrations" / "0001_long.py").write_text("x = 1\n" * 2000)
    found = production_modules(tmp_path)
    assert found == {"memories/long.py": LIMIT + 1}
    assert over_the_limit(found) == [
        f"memories/long.py: {LIMIT + 1} lines, over {LIMIT}: split it by job",
        *(f"{m}: listed, but not there" for m in sorted(STILL_TO_SPLIT)),
    ]
    listed = {"memories/listed.py": LIMIT + 50}
    assert over_the_limit({"memories/listed.py": LIMIT + 50}, listed) == []
    assert over_the_limit({"memories/listed.py": LIMIT + 51}, listed) == [
        f"memories/listed.py: {LIMIT + 51} lines, grew past {LIMIT + 50}: split it instead"
    ]
    assert over_the_limit({"memories/listed.py": LIMIT}, listed) == [
        f"memories/listed.py: {LIMIT} lines now: take it off STILL_TO_SPLIT"
    ]
    assert over_the_limit({}, listed) == ["memories/listed.py: listed, but not there"]
