"""Allow `python -m problemgen`."""

import sys

try:
    from problemgen.cli import main
except KeyboardInterrupt:  # Ctrl-C while starting: the same quiet exit as anywhere later
    sys.stderr.write("\naborted\n")
    sys.exit(130)

if __name__ == "__main__":
    main()
