"""When catalog does not answer, the page says so plainly, keeps what was typed, and the change is applied
once catalog is back (the command waits on the topic)."""
import signal
import uuid

from adminsite import eventually, site  # noqa: F401 (fixture)


def test_a_save_while_catalog_is_down_says_so_and_is_applied_later(site):
    tour = site.create_tour(f"Paused {uuid.uuid4().hex[:6]}")
    catalog = site.suite.processes["catalog"]
    catalog.send_signal(signal.SIGSTOP)
    try:
        site.fill("Tour's Purpose", "Saved while catalog was paused")
        site.click_button("Save")
        assert "did not answer within" in site.text
        assert "may be down" in site.text
        assert site.value("Tour's Purpose") == "Saved while catalog was paused", "what was typed is kept"
    finally:
        catalog.send_signal(signal.SIGCONT)

    def applied():
        site.open(f"/tours/{tour}")
        return site.value("Tour's Purpose") == "Saved while catalog was paused"
    assert eventually(applied, timeout=30, interval=0.5)
