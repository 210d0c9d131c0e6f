//! `--session`, `--since`, `--until`, `--tz`, `--agent`, `--project` and `--model`, resolved.

use crate::model::Agent;
use crate::stats::filter::Filter;
use crate::stats::time::{End, Zone, bound};

use super::args::FilterArgs;
use super::error::CliError;

/// The filter and time zone the arguments give.
///
/// # Errors
/// A usage error naming the argument that is wrong.
pub fn resolve(args: &FilterArgs) -> Result<(Filter, Zone), CliError> {
    let usage = |flag: &str, message: String| CliError::Usage { message: format!("{flag}: {message}") };
    let zone: Zone = args.tz.parse().map_err(|m| usage("--tz", m))?;
    let since =
        args.since.as_deref().map(|t| bound(t, zone, End::Start)).transpose().map_err(|m| usage("--since", m))?;
    let until =
        args.until.as_deref().map(|t| bound(t, zone, End::Finish)).transpose().map_err(|m| usage("--until", m))?;
    if let (Some(s), Some(u)) = (since, until)
        && s >= u
    {
        return Err(usage("--until", "is not after --since".into()));
    }
    let patterns = |flag: &str, texts: &[String]| {
        texts.iter().map(|t| t.parse().map_err(|m| usage(flag, m))).collect::<Result<Vec<_>, _>>()
    };
    let filter = Filter {
        sessions: args.sessions.clone(),
        since,
        until,
        agents: args.agents.iter().filter_map(|a| Agent::from_name(a)).collect(),
        projects: patterns("--project", &args.projects)?,
        models: patterns("--model", &args.models)?,
    };
    Ok((filter, zone))
}
