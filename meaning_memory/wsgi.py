import os

from django.core.wsgi import get_wsgi_application

from meaning_memory.env import web_process

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "meaning_memory.settings")

# A web process: its requests' database work has a statement timeout (see the settings).
with web_process():
    application = get_wsgi_application()
