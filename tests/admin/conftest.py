import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user(username="root", password="root-password", is_staff=True,
                                                is_superuser=True)


@pytest.fixture
def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client
