"""Payment intents: creation, reading, and the state machine every move goes through."""
