#!/usr/bin/env python
"""Django's command-line utility; `meaning-memory` runs the same commands."""

from meaning_memory.cli import main

if __name__ == "__main__":
    main()
