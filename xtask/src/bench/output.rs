//! Where a bench's results go: a fresh `target/bench/<timestamp>-<name>/`
//! and its CSV files.

use std::path::{Path, PathBuf};

use crate::results::RunRecord;

/// `YYYYmmdd-HHMMSS` in UTC.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86400) as i64, secs % 86400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", rem / 3600, rem / 60 % 60, rem % 60)
}

/// A fresh directory `target/bench/<timestamp>-<name>`.
pub fn out_dir(name: &str) -> Result<PathBuf, String> {
    let dir = crate::workspace_root().join("target/bench").join(format!("{}-{}", timestamp(), name));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Writes `data` to `path`, the path in the message if it fails.
pub(super) fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    std::fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()))
}

/// runs.csv (one row per run and metric) and schedstat.csv (one per run and CPU).
pub fn write_csv(dir: &Path, runs: &[RunRecord], label: Option<&str>) -> Result<(), String> {
    let err = |e: csv::Error| e.to_string();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["label", "run", "ok", "metric", "value", "unit", "better"]).map_err(err)?;
    for r in runs {
        for f in &r.results {
            let better = if f.higher_is_better { "higher" } else { "lower" };
            w.write_record([label.unwrap_or(""), &r.run.to_string(), &r.ok.to_string(), &f.metric, &f.value.to_string(), &f.unit, better])
                .map_err(err)?;
        }
    }
    write(&dir.join("runs.csv"), &w.into_inner().map_err(|e| e.to_string())?)?;
    let keys: Vec<String> = runs
        .iter()
        .flat_map(|r| r.schedstat_delta.iter().flat_map(|m| m.keys().cloned()))
        .filter(|k| k != "cpu")
        .fold(Vec::new(), |mut v, k| {
            if !v.contains(&k) {
                v.push(k);
            }
            v
        });
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["label".to_string(), "run".into(), "cpu".into()];
    head.extend(keys.iter().cloned());
    w.write_record(&head).map_err(err)?;
    for r in runs {
        for m in &r.schedstat_delta {
            let mut row = vec![label.unwrap_or("").to_string(), r.run.to_string(), m.get("cpu").map_or(String::new(), |c| c.to_string())];
            row.extend(keys.iter().map(|k| m.get(k).map_or(String::new(), |v| v.to_string())));
            w.write_record(&row).map_err(err)?;
        }
    }
    write(&dir.join("schedstat.csv"), &w.into_inner().map_err(|e| e.to_string())?)
}
