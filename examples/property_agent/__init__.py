"""A property-management assistant: listings, bookings and revenue in SQLite, answered through tools.

``make_agent()`` and ``respond()`` are the entry points jurybox suites use;
``python -m examples.property_agent`` chats with it in a terminal.
"""

from examples.property_agent.agent import PropertyAgent, make_agent, respond

__all__ = ["PropertyAgent", "make_agent", "respond"]
