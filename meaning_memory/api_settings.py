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
    # One name for each set of values a field takes, where fields of one name take different
    # sets (an agent's feedback action and a history's, a memory's status and a run's …).
    "ENUM_NAME_OVERRIDES": {
        "ActionEnum": "memories.services.feedback.CURATE_ACTIONS",
        "ProvenanceActionEnum": "memories.models.ProvenanceEvent.Action",
        "DirectionEnum": "memories.kinds.WALK_DIRECTIONS",
        "LinkDirectionEnum": "memories.kinds.LINK_DIRECTIONS",
        "MemoryStatusEnum": "memories.models.Memory.Status",
        "ScoreOriginEnum": "memories.models.Memory.ScoreOrigin",
        "EntityOriginEnum": "memories.models.Entity.Origin",
        "StoredLinkOriginEnum": "memories.models.Link.Origin",
        "LinkOriginEnum": "memories.api.answers.memories.LINK_ORIGINS",
        "RecordKindEnum": "memories.api.answers.relations.RECORD_KINDS",
        "CheckKindEnum": "readiness.models.Evidence.Kind",
        "VerdictEnum": "readiness.answers.VERDICTS",
        "EvidenceSourceEnum": "readiness.answers.SOURCES",
    },
}
