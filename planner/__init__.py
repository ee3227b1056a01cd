"""planner: a private personal planner agent on a local Ollama server.

The folders are the layers, each importing only from those below it:
ui -> agent -> tools -> memory -> storage -> model, over settings, dates and
prompts. README "How it works" walks one turn through them.
"""
