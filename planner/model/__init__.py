"""The model edge: the Ollama client (client.py); every call to a model goes through it and every transport fault becomes one line."""
