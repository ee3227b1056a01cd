"""The interface: flags, the terminal, the plain and one-shot modes, /commands and subcommands; the only layer that prints."""
