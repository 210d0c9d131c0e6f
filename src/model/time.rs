//! Timestamps on the wire: RFC 3339 in UTC with exactly three fractional digits.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

/// Formats a time as `2026-02-23T11:40:29.275Z`.
pub fn format(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Appends [`format`]'s text to `out`, without allocating for the years 0 to 9999.
pub fn write(t: &DateTime<Utc>, out: &mut Vec<u8>) {
    use chrono::{Datelike, Timelike};
    let (date, time) = (t.date_naive(), t.time());
    let nanos = time.nanosecond();
    // Other years are written with a sign, and a leap second as second 60: chrono knows how.
    let year = u32::try_from(date.year()).ok().filter(|y| *y <= 9999 && nanos < 1_000_000_000);
    let Some(year) = year else {
        return out.extend_from_slice(format(t).as_bytes());
    };
    let digit = |n: u32| b'0' + (n % 10) as u8;
    let (month, day, seconds, millis) = (date.month(), date.day(), time.num_seconds_from_midnight(), nanos / 1_000_000);
    let (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    out.extend_from_slice(&[
        digit(year / 1000),
        digit(year / 100),
        digit(year / 10),
        digit(year),
        b'-',
        digit(month / 10),
        digit(month),
        b'-',
        digit(day / 10),
        digit(day),
        b'T',
        digit(hour / 10),
        digit(hour),
        b':',
        digit(minute / 10),
        digit(minute),
        b':',
        digit(second / 10),
        digit(second),
        b'.',
        digit(millis / 100),
        digit(millis / 10),
        digit(millis),
        b'Z',
    ]);
}

pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(t))
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
    DateTime::parse_from_rfc3339(&text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| D::Error::custom(format!("invalid timestamp {text:?}: {e}")))
}

/// The same for optional times, `null` when absent.
pub mod option {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => super::serialize(t, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        #[derive(Deserialize)]
        struct Time(#[serde(with = "super")] DateTime<Utc>);
        Ok(Option::<Time>::deserialize(d)?.map(|t| t.0))
    }
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone};

    use super::*;

    fn written(t: &DateTime<Utc>) -> String {
        let mut out = Vec::new();
        write(t, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn write_appends_what_format_returns() {
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        let mut times = vec![
            day(2026, 2, 23).and_hms_milli_opt(11, 40, 29, 275).unwrap(),
            day(0, 1, 1).and_hms_opt(0, 0, 0).unwrap(),
            day(9999, 12, 31).and_hms_nano_opt(23, 59, 59, 999_999_999).unwrap(),
            day(-1, 12, 31).and_hms_opt(23, 59, 59).unwrap(),
            day(10000, 1, 1).and_hms_opt(0, 0, 0).unwrap(),
            // A leap second.
            day(2016, 12, 31).and_hms_milli_opt(23, 59, 59, 1_500).unwrap(),
            day(2025, 7, 4).and_hms_nano_opt(5, 6, 7, 8_900_001).unwrap(),
        ];
        // Every month, day, hour, minute and second over a few years, and many fractions.
        let start = Utc.with_ymd_and_hms(1999, 1, 1, 0, 0, 0).unwrap().timestamp();
        times.extend((0..20_000).map(|i| {
            let t = DateTime::from_timestamp(start + i * 11_113 + i * i, (i as u64 * 7_919_993 % 1_000_000_000) as u32);
            t.unwrap().naive_utc()
        }));
        for time in times {
            let t = Utc.from_utc_datetime(&time);
            assert_eq!(written(&t), format(&t), "{time:?}");
        }
    }
}
