"""``python -m jurybox``: the ``jurybox`` command, for environments without its script on PATH."""

from jurybox.cli import main

if __name__ == "__main__":
    main()
