"""The agent: the ReAct loop, the turn as values, guards, the tool runner, the critic; it never prints or reads input."""
