"""Budgets in the admin: a positive, sane amount in USD, a known period, the scope's own target; a group
deleted takes its budget with it."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from usage_app.models import Budget


@pytest.fixture
def admin_client(db) -> Client:
    root = get_user_model().objects.create_user(username="root", password="root-password", is_staff=True,
                                                is_superuser=True)
    client = Client()
    client.force_login(root)
    return client


def add(client, **fields):
    return client.post("/admin/usage_app/budget/add/", {"warn_percent": "80", **fields})


def test_an_admin_sets_a_budget_for_everyone_a_group_and_a_person(admin_client):
    group = Group.objects.create(name="interns")
    dora = get_user_model().objects.create_user(username="dora")
    assert add(admin_client, scope="everyone", period="month", amount="500").status_code == 302
    assert add(admin_client, scope="group", group=group.pk, period="week", amount="20").status_code == 302
    assert add(admin_client, scope="person", person=dora.pk, period="day", amount="2.50").status_code == 302
    assert sorted(str(b) for b in Budget.objects.all()) == [
        "dora: $2.50 per day", "everyone: $500.00 per month", "group interns: $20.00 per week"]
    assert admin_client.get("/admin/usage_app/budget/").status_code == 200
    assert admin_client.get("/admin/usage_app/usagerecord/").status_code == 200
    assert admin_client.get("/admin/usage_app/usageday/").status_code == 200


@pytest.mark.parametrize("amount", ["0", "-5", "1000000000", "abc", "0.001"])
def test_it_refuses_a_budget_of_zero_negative_or_absurd_amounts(admin_client, amount):
    response = add(admin_client, scope="everyone", period="day", amount=amount)
    assert response.status_code == 200 and response.context["adminform"].form.errors
    assert not Budget.objects.exists()


def test_it_refuses_an_unknown_period_or_a_scope_without_its_target(admin_client):
    group = Group.objects.create(name="interns")
    for fields in ({"scope": "everyone", "period": "year", "amount": "5"},
                   {"scope": "group", "period": "day", "amount": "5"},
                   {"scope": "everyone", "group": group.pk, "period": "day", "amount": "5"},
                   {"scope": "planet", "period": "day", "amount": "5"}):
        response = add(admin_client, **fields)
        assert response.status_code == 200 and response.context["adminform"].form.errors, fields
    assert not Budget.objects.exists()


def test_a_second_budget_of_the_same_scope_and_period_is_refused(admin_client):
    assert add(admin_client, scope="everyone", period="day", amount="5").status_code == 302
    response = add(admin_client, scope="everyone", period="day", amount="7")
    assert response.status_code == 200
    assert Budget.objects.count() == 1


def test_a_deleted_group_takes_its_budget_with_it(db):
    group = Group.objects.create(name="interns")
    Budget.objects.create(scope="group", group=group, period="day", amount=5)
    Budget.objects.create(scope="everyone", period="day", amount=50)
    group.delete()
    assert [b.scope for b in Budget.objects.all()] == ["everyone"]
