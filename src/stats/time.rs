//! Time zones and time bounds given on the command line: `--tz`, `--since`, `--until`.

use chrono::{DateTime, Datelike, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

/// The time zone that days, weeks and months are counted in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Zone {
    /// UTC.
    Utc,
    /// This machine's zone.
    Local,
    /// A fixed offset such as `+02:00`.
    Fixed(FixedOffset),
    /// A zone of the tz database such as `Europe/Berlin`.
    Named(chrono_tz::Tz),
}

impl std::str::FromStr for Zone {
    type Err = String;

    /// `UTC`, `local`, an offset (`+02:00`, `-0530`) or a tz database name (`Asia/Tokyo`).
    fn from_str(text: &str) -> Result<Zone, String> {
        if text.eq_ignore_ascii_case("utc") || text == "Z" {
            return Ok(Zone::Utc);
        }
        if text.eq_ignore_ascii_case("local") {
            return Ok(Zone::Local);
        }
        if text.starts_with(['+', '-']) {
            return text
                .parse::<FixedOffset>()
                .map(Zone::Fixed)
                .map_err(|_| format!("`{text}` is not an offset such as +02:00"));
        }
        text.parse::<chrono_tz::Tz>()
            .map(Zone::Named)
            .map_err(|_| format!("`{text}` is not a time zone: give UTC, local, an offset such as +02:00, or a name such as Europe/Berlin"))
    }
}

impl Zone {
    /// The calendar date of `t` in this zone.
    pub fn date(self, t: DateTime<Utc>) -> NaiveDate {
        match self {
            Zone::Utc => t.date_naive(),
            Zone::Local => t.with_timezone(&Local).date_naive(),
            Zone::Fixed(o) => t.with_timezone(&o).date_naive(),
            Zone::Named(z) => t.with_timezone(&z).date_naive(),
        }
    }

    /// The instant of the local time `t` in this zone; the earlier one where clocks went back,
    /// and the first valid one after a gap where they went forward.
    pub fn instant(self, t: NaiveDateTime) -> DateTime<Utc> {
        fn resolve<Z: TimeZone>(zone: &Z, t: NaiveDateTime) -> DateTime<Utc> {
            (0..=24 * 60)
                .find_map(|minutes| zone.from_local_datetime(&(t + chrono::Duration::minutes(minutes))).earliest())
                .map_or_else(|| t.and_utc(), |local| local.with_timezone(&Utc))
        }
        match self {
            Zone::Utc => t.and_utc(),
            Zone::Local => resolve(&Local, t),
            Zone::Fixed(o) => resolve(&o, t),
            Zone::Named(z) => resolve(&z, t),
        }
    }
}

/// A period that rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// `2026-02-23`.
    Day,
    /// ISO week, `2026-W09`, from Monday.
    Week,
    /// `2026-02`.
    Month,
}

impl Period {
    /// The label of the period holding `date`.
    pub fn label(self, date: NaiveDate) -> String {
        match self {
            Period::Day => date.format("%Y-%m-%d").to_string(),
            Period::Week => {
                let week = date.iso_week();
                format!("{}-W{:02}", week.year(), week.week())
            }
            Period::Month => date.format("%Y-%m").to_string(),
        }
    }
}

/// Which end of a range a bound is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `--since`: a date means its first instant.
    Start,
    /// `--until`: a date means its whole day, inclusive.
    Finish,
}

/// Parses `--since`/`--until`: a date (`2026-02-23`, `20260223`), a local time
/// (`2026-02-23T14:00`, `2026-02-23 14:00:30`) in `zone`, or a time with an offset (RFC 3339).
/// Gives the first instant after the bound's range for [`End::Finish`] (an exclusive end), the
/// first instant in it for [`End::Start`].
///
/// # Errors
/// A message saying what was expected.
pub fn bound(text: &str, zone: Zone, end: End) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").or_else(|_| NaiveDate::parse_from_str(text, "%Y%m%d"));
    if let Ok(date) = date {
        let day = match end {
            End::Start => date,
            End::Finish => date.succ_opt().ok_or_else(|| format!("`{text}` is past the last date"))?,
        };
        return Ok(zone.instant(day.and_time(NaiveTime::MIN)));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc) + exclusive(end));
    }
    for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(zone.instant(t) + exclusive(end));
        }
    }
    Err(format!("`{text}` is not a date (2026-02-23) or a time (2026-02-23T14:00, or RFC 3339)"))
}

/// A time given as an end is included: the exclusive end is a millisecond later (the
/// resolution of the agents' timestamps).
fn exclusive(end: End) -> chrono::Duration {
    match end {
        End::Start => chrono::Duration::zero(),
        End::Finish => chrono::Duration::milliseconds(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn dates_and_times_bound_ranges_in_the_zone_given() {
        let tokyo: Zone = "Asia/Tokyo".parse().unwrap();
        // Tokyo is 9 hours ahead of UTC all year.
        assert_eq!(bound("2026-02-23", tokyo, End::Start), Ok(utc("2026-02-22T15:00:00Z")));
        assert_eq!(bound("20260223", tokyo, End::Finish), Ok(utc("2026-02-23T15:00:00Z")));
        assert_eq!(bound("2026-02-23T14:00", Zone::Utc, End::Start), Ok(utc("2026-02-23T14:00:00Z")));
        assert_eq!(bound("2026-02-23T14:00:00+02:00", tokyo, End::Finish), Ok(utc("2026-02-23T12:00:00.001Z")));
        assert!(bound("yesterday", Zone::Utc, End::Start).unwrap_err().contains("not a date"));
        // 02:30 on the day clocks go forward in Berlin does not exist: the next valid time.
        let berlin: Zone = "Europe/Berlin".parse().unwrap();
        assert_eq!(bound("2026-03-29 02:30", berlin, End::Start), Ok(utc("2026-03-29T01:00:00Z")));
    }

    #[test]
    fn zones_by_name_offset_or_keyword() {
        assert_eq!("utc".parse::<Zone>(), Ok(Zone::Utc));
        assert_eq!("+05:30".parse::<Zone>(), Ok(Zone::Fixed(FixedOffset::east_opt(19800).unwrap())));
        assert!("Mars/Olympus".parse::<Zone>().unwrap_err().contains("not a time zone"));
        let la: Zone = "America/Los_Angeles".parse().unwrap();
        assert_eq!(la.date(utc("2026-02-23T07:59:59Z")), NaiveDate::from_ymd_opt(2026, 2, 22).unwrap());
    }

    #[test]
    fn periods_are_labelled_by_day_iso_week_and_month() {
        let d = NaiveDate::from_ymd_opt(2027, 1, 1).unwrap();
        // 1 January 2027 is a Friday: ISO week 53 of 2026.
        assert_eq!(
            (Period::Day.label(d), Period::Week.label(d), Period::Month.label(d)),
            ("2027-01-01".into(), "2026-W53".into(), "2027-01".into())
        );
    }
}
