from django.db import models


class EvaluationRun(models.Model):
    """One ``stare-eval``: when, by which version of the engine, on which data, and the
    checks it could not run with why. Its evidence rows point to it."""

    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    engine_version = models.CharField(max_length=40, blank=True)
    datasets = models.JSONField(
        default=dict, blank=True, help_text="per kind of data: file name, sha256, bytes"
    )
    not_run = models.JSONField(default=dict, blank=True, help_text="check id: why it could not run")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"evaluation run {self.pk} ({self.started_at:%Y-%m-%d %H:%M})"


class Evidence(models.Model):
    """One run of one readiness check: what it measured, against what threshold, on which data,
    for which code and configuration. The readiness report is built from these rows only."""

    class Kind(models.TextChoices):
        SYNTHETIC = "synthetic", "Synthetic (data the project made)"
        GATED_EVAL = "gated-eval", "Gated evaluation (external data)"

    capability = models.CharField(max_length=40, help_text="e.g. S/core")
    check_id = models.CharField(max_length=80)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    metric = models.CharField(max_length=300)
    threshold = models.FloatField()
    value = models.FloatField(null=True, blank=True)
    passed = models.BooleanField()
    dataset = models.CharField(max_length=200, blank=True)
    dataset_sha256 = models.CharField(max_length=64, blank=True)
    dataset_bytes = models.BigIntegerField(null=True, blank=True)
    run = models.ForeignKey(
        EvaluationRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="evidence"
    )
    code_version = models.CharField(max_length=64, help_text="sha256 of the capability's code")
    config_version = models.CharField(max_length=64, help_text="sha256 of its settings")
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "evidence"
        indexes = [models.Index(fields=["check_id", "-created_at"], name="evidence_latest")]

    def __str__(self) -> str:
        return f"{self.check_id}: {'pass' if self.passed else 'fail'} ({self.value})"
