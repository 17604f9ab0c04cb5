"""The REST framework's settings and the OpenAPI schema's, read by ``meaning_memory.settings``
(plain values: nothing here reads the environment)."""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["memories.api.auth.AgentTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["memories.api.auth.IsAgent"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["memories.api.parsers.JsonParser"],
    "EXCEPTION_HANDLER": "memories.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR = {
    "TITLE": "Meaning Memory API",
    "DESCRIPTION": "Remember, search and curate the memories of AI agents.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memories.api.schema.document_errors",
    ],
}
