"""python manage.py demo: the whole product on this machine with the embedded defaults.

Migrates, loads the demo incidents, customers and users, runs the demo pipelines with the offline
model (first start only), then serves the web app and a Celery worker together until Ctrl-C.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from agents.models import Run
from reviewer.demo import load_everything, run_demo_pipelines
from reviewer.models import Escalation


class Command(BaseCommand):
    help = "Set up the demo data and serve the web app and a worker on 127.0.0.1."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--setup-only", action="store_true", help="Prepare the data, then exit (no servers).")

    def handle(self, *args, port, setup_only, **options):
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)  # WhiteNoise serves them
        logins_file = Path(settings.VAR_DIR) / "demo-logins.json"
        logins = load_everything(logins_file)
        ran = run_demo_pipelines(user=get_user_model().objects.get(username="ops"))
        counts = {status: Run.objects.filter(status=status).count() for status in ("ok", "stopped")}
        self.stdout.write(f"Demo data ready: {len(ran)} new demo runs; {counts['ok']} succeeded, "
                          f"{counts['stopped']} stopped, {Escalation.objects.filter(status='pending').count()} "
                          "escalations pending.")
        if setup_only:
            return self.print_logins(logins, port)
        self.serve(port, logins)

    def print_logins(self, logins, port):
        self.stdout.write(self.style.SUCCESS(f"\n  Open http://127.0.0.1:{port}/  (admin: http://127.0.0.1:{port}/admin/)\n"))
        self.stdout.write(f"  API docs: http://127.0.0.1:{port}/api/docs  (tokens: manage.py api_token <user>)\n")
        roles = {"lead": "support lead: works the escalation inbox", "ops": "ops staff: starts runs",
                 "admin": "admin: tunes policies in the admin site"}
        for username, password in logins.items():
            self.stdout.write(f"  {username:6} / {password:16} {roles.get(username, '')}")
        self.stdout.write(f"  (kept in {Path(settings.VAR_DIR) / 'demo-logins.json'})\n")

    def serve(self, port, logins):
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewer", "worker", "--beat", "--pool", "threads",
             "--concurrency", "32", "--loglevel", "WARNING", "--schedule", settings.CELERY_BEAT_SCHEDULE_FILENAME],
            cwd=settings.BASE_DIR, start_new_session=True)
        web = subprocess.Popen([*manage, "runserver", f"127.0.0.1:{port}", "--noreload"], cwd=settings.BASE_DIR,
                               start_new_session=True)
        self.print_logins(logins, port)
        self.stdout.write("  Ctrl-C stops the web app and the worker.\n")
        try:
            while worker.poll() is None and web.poll() is None:
                time.sleep(0.5)
            self.stderr.write("A process ended on its own; stopping the other.")
        except KeyboardInterrupt:
            self.stdout.write("\nStopping…")
        finally:
            for process in (web, worker):
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
            for process in (web, worker):
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
