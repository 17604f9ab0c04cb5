from django.db import models


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
