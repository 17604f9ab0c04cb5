from django.urls import path

from readiness import views

app_name = "readiness"

urlpatterns = [
    path("api/v1/readiness", views.ReadinessApi.as_view(), name="api"),
    path("w/<slug:slug>/readiness", views.page, name="page"),
]
