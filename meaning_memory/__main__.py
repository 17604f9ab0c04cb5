from meaning_memory.cli import main

main()
