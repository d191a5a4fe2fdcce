"""Allow `python -m problemgen`."""

from problemgen.cli import main

if __name__ == "__main__":
    main()
