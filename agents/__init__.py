"""The runner: the gated pipelines, their policies, and the runs they make.

``agents.core`` is the pipelines as plain Python (no Django, no Celery, no database). Around it,
the Django glue: policy and run models, admin, the tasks that execute runs, the observer that
records them, and the ``run_pipeline`` command. Nothing here imports the reviewer app.
"""
