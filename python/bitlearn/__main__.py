"""``python -m bitlearn verify|compare|doctor|...``: the ``bitlearn`` command line, in process."""
import sys

from . import _cli


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    return _cli(*args)


if __name__ == "__main__":
    sys.exit(main())
