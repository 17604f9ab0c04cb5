import os

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")

# Static files (admin, API docs) are served by the app itself: one process, nothing to collect.
application = ASGIStaticFilesHandler(get_asgi_application())
