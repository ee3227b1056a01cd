"""Sync: the tasks with the user's other devices through open standards (CalDAV)."""
