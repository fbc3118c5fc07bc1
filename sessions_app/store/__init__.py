"""The session store: records of sessions, messages, parts and todos, written in transactions and announced
through agentserver.events.publisher. Below both the use-case services and the agent runtime, which write through it."""
