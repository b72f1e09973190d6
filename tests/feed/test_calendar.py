"""The feed's calendar (issue 18) read by real calendar software: events imported through `catalog import`, their
calendar.ics parsed by the `icalendar` library and expanded twice, by dateutil's rrule from each event's DTSTART,
RRULE and EXDATE, and by `recurring-ical-events` from the whole file (its VTIMEZONEs included): both must give
exactly the occurrences the feed's /v1/calendar lists."""
from __future__ import annotations

import json
import time
import urllib.request
import uuid
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events
from dateutil.rrule import rrulestr


def get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=15) as response:
        return response.headers.get("Content-Type"), response.read()


def test_calendar_ics_is_read_by_calendar_software_and_agrees_with_the_feed(suite):
    tag = uuid.uuid4().hex[:6]
    weekly = {"title": f"Campus visit {tag}", "startsAt": "2031-03-03T10:00", "endsAt": "2031-03-03T11:30", "timeZone": "America/New_York",
              "placePoiLegacyId": 1011, "registrationUrl": "https://uncw.edu/visit/register",
              "recurrence": {"frequency": "weekly", "byDay": ["MO", "WE"], "until": "2031-04-30"},
              "exceptionDates": ["2031-03-10T10:00", "2031-03-12T10:00"]}
    monthly = {"title": f"Open Day {tag}", "summary": "Meet the departments; tour the halls, labs", "startsAt": "2031-01-31T09:00",
               "endsAt": "2031-01-31T15:00", "timeZone": "Europe/London", "placeText": "Hoggard Hall",
               "recurrence": {"frequency": "monthly", "count": 5}}
    fair = {"title": f"Book fair {tag}", "startsAt": "2031-03-20", "endsAt": "2031-03-21", "timeZone": "UTC", "allDay": True}
    draft = {"title": f"Not yet {tag}", "startsAt": "2031-03-05T10:00", "endsAt": "2031-03-05T11:00", "timeZone": "UTC", "status": "draft"}
    path = Path(suite.log_dir) / f"calendar-{tag}.json"
    path.write_text(json.dumps({"calendar": [weekly, monthly, fair, draft]}))
    result = suite.run_tool("catalog", "import", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 calendar events" in result.stdout + result.stderr

    window = "from=2031-01-01&to=2031-06-30"
    deadline = time.monotonic() + 30
    while True:
        listed = json.loads(get(f"{suite.feed_url}/v1/calendar?{window}")[1])["occurrences"]
        mine = [o for o in listed if o["title"].endswith(tag)]
        if len({o["title"] for o in mine}) == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert f"Not yet {tag}" not in {o["title"] for o in mine}

    content_type, body = get(f"{suite.feed_url}/v1/calendar.ics")
    assert content_type == "text/calendar; charset=utf-8"
    assert all(len(line) <= 75 for line in body.split(b"\r\n")), "lines are folded at 75 octets"
    calendar = icalendar.Calendar.from_ical(body)
    events = {str(e.get("summary")): e for e in calendar.walk("VEVENT") if str(e.get("summary")).endswith(tag)}
    assert set(events) == {weekly["title"], monthly["title"], fair["title"]}
    assert {str(z.get("tzid")) for z in calendar.walk("VTIMEZONE")} >= {"America/New_York", "Europe/London"}
    assert str(events[monthly["title"]].get("description")).startswith("Meet the departments; tour the halls, labs")
    assert str(events[weekly["title"]].get("location")) == "Historic Quad", "the place named as the feed names the POI"

    # Every occurrence, expanded by dateutil from the file's DTSTART, RRULE and EXDATE, against the feed's list.
    def expand(event) -> list[str]:
        start = event.decoded("dtstart")
        if "rrule" not in event:
            return [start.isoformat()]
        # The feed was asked for January to June, in its site's zone (UTC here).
        LAST = datetime(2031, 7, 1, tzinfo=ZoneInfo("UTC"))
        rule = rrulestr(event["rrule"].to_ical().decode(), dtstart=start)
        skipped = set()
        exdates = event.get("exdate")
        for group in (exdates if isinstance(exdates, list) else [exdates] if exdates else []):
            skipped |= {d.dt for d in group.dts}
        return [occurrence.isoformat() for occurrence in rule if occurrence not in skipped and occurrence < LAST]

    for title, event in events.items():
        from_file = expand(event)
        from_feed = [o["startsAt"] for o in mine if o["title"] == title]
        if event.decoded("dtstart").__class__.__name__ == "date":
            assert from_feed == from_file, title
        else:
            assert [datetime.fromisoformat(s) for s in from_feed] == [datetime.fromisoformat(s) for s in from_file], title
    # The second reader: every occurrence in January to June, from the whole file.
    expanded = recurring_ical_events.of(calendar).between(datetime(2031, 1, 1, tzinfo=ZoneInfo("UTC")), datetime(2031, 7, 1, tzinfo=ZoneInfo("UTC")))
    by_reader = sorted((str(e.get("summary")), e.decoded("dtstart").isoformat()) for e in expanded if str(e.get("summary")).endswith(tag))
    by_feed = sorted((o["title"], o["startsAt"]) for o in mine)
    assert [(t, s[:10]) for t, s in by_reader] == [(t, s[:10]) for t, s in by_feed]
    assert all(s1 == s2 or datetime.fromisoformat(s1) == datetime.fromisoformat(s2) for (_, s1), (_, s2) in zip(by_reader, by_feed))

    # The DST change in the US (9 March 2031) leaves 10:00 at 10:00 in the file and on the feed.
    visit = [o["startsAt"] for o in mine if o["title"] == weekly["title"]]
    assert "2031-03-05T10:00:00-05:00" in visit and "2031-03-17T10:00:00-04:00" in visit
    assert not any(s.startswith("2031-03-10") or s.startswith("2031-03-12") for s in visit)
    # Monthly on the 31st: January, March, May (February and April have none); the other two of five are past June.
    assert [o["startsAt"][:10] for o in mine if o["title"] == monthly["title"]] == ["2031-01-31", "2031-03-31", "2031-05-31"]
