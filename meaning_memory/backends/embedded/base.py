"""Django's PostgreSQL backend on the embedded server: the first connection starts it.

``DATABASES['default']['EMBEDDED']`` names the data directory (``DATA_DIR``) and, optionally,
``SHARED_BUFFERS``; the server's Unix socket becomes the connection's host once it runs.
"""

from __future__ import annotations

from django.db.backends.postgresql import base

from meaning_memory.embedded import server_for


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        params = super().get_connection_params()
        embedded = self.settings_dict["EMBEDDED"]
        address = server_for(
            embedded["DATA_DIR"], shared_buffers=embedded.get("SHARED_BUFFERS")
        ).ensure_started()
        params["host"], params["port"] = address.host, address.port
        return params
