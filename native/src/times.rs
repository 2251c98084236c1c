//! PostgreSQL's binary timestamptz made a UTC datetime natively (`TimeDecoder`, used by
//! `server/lineage/sql.py` as asyncpg's decoder for the lineage connections).
//!
//! A large RUN graph's statements bring ~36,000 timestamps (two per level row, three per
//! run). asyncpg's own binary decoder builds each as epoch + timedelta (~0.9 µs); the text
//! form through `datetime.fromisoformat` costs PostgreSQL ~0.1 µs more per value to write
//! (its date formatting), ~3 ms of the largest capped depth-5 graph's statements. The
//! binary form is 8 bytes, microseconds since 2000-01-01 UTC, made a datetime here with
//! the same fields `fromisoformat` gives.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDateTime, PyTzInfo};

const MICROS_PER_DAY: i64 = 86_400_000_000;
/// 2000-01-01 (PostgreSQL's epoch) as days since 0000-03-01 in the proleptic Gregorian
/// calendar, the origin of `civil`.
const PG_EPOCH_DAYS: i64 = 730_425;

/// (year, month, day) of a day counted from 0000-03-01 (H. Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u8, u8) {
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153; // March = 0
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u8;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u8;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Decodes asyncpg's binary timestamptz values (their 8 bytes) into UTC datetimes.
#[pyclass(frozen)]
pub struct TimeDecoder {
    utc: Py<PyTzInfo>,
}

#[pymethods]
impl TimeDecoder {
    /// `utc`: datetime.UTC, the tzinfo of every datetime made.
    #[new]
    fn new(utc: Bound<'_, PyTzInfo>) -> Self {
        Self { utc: utc.unbind() }
    }

    /// The datetime of a binary timestamptz; ValueError for infinity and for years outside
    /// 1-9999, which `datetime` cannot hold (the consumer stores neither).
    fn __call__<'py>(&self, data: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyDateTime>> {
        let bytes = <[u8; 8]>::try_from(data.as_bytes())
            .map_err(|_| PyValueError::new_err("a timestamptz is 8 bytes"))?;
        let micros = i64::from_be_bytes(bytes);
        if micros == i64::MAX || micros == i64::MIN {
            return Err(PyValueError::new_err("infinite timestamptz"));
        }
        let (year, month, day) = civil(micros.div_euclid(MICROS_PER_DAY) + PG_EPOCH_DAYS);
        let of_day = micros.rem_euclid(MICROS_PER_DAY);
        let seconds = of_day / 1_000_000;
        let year = i32::try_from(year).map_err(|_| PyValueError::new_err("year out of range"))?;
        PyDateTime::new(
            data.py(),
            year,
            month,
            day,
            (seconds / 3_600) as u8,
            (seconds / 60 % 60) as u8,
            (seconds % 60) as u8,
            (of_day % 1_000_000) as u32,
            Some(self.utc.bind(data.py())),
        )
    }
}
