"""The LLM layer: one interface, two backends (the openai SDK and the offline model)."""
