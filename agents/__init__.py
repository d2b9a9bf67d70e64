"""The gated pipelines.

The core (``agents.core.pipelines``, ``agents.core.guard``, ``agents.core.llm``, ``agents.routing`` and the small
modules beside them) is plain Python with no Django import. The Django glue (models, admin, tasks,
management commands) lives beside it and only calls into the core.
"""
