"""Long-term memory's error, apart from the memory itself, so the tool layer can name it without loading
the embeddings (numpy) and the model client: the shell's commands start in a tenth of a second."""


class LongTermMemoryError(Exception):
    """A memory that cannot be stored, found or searched; the message says what to do."""
