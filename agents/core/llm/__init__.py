"""The LLM layer (SPEC §5): one interface, two backends (the openai SDK and the offline model)."""
