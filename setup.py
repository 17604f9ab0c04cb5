"""The build's one addition to pyproject.toml: the top-level ``templates/`` shipped inside the
package, as ``meaning_memory/templates`` (an installed engine reads them there; a clone reads
its own, see ``meaning_memory.settings``)."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithTemplates(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install runs from the clone, templates and all
        source = Path(__file__).resolve().parent / "templates"
        target = Path(self.build_lib) / "meaning_memory" / "templates"
        for path in sorted(source.rglob("*")):
            if path.is_file():
                destination = target / path.relative_to(source)
                self.mkpath(str(destination.parent))
                self.copy_file(str(path), str(destination))


setup(cmdclass={"build_py": BuildWithTemplates})
