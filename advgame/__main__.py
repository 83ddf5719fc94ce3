"""``python -m advgame``: the same as the ``advgame`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
