//! [`crate::Database::check`]'s part for the maintained clusters: the
//! tables agree with each other, each representative is the best member by
//! the policy (by the stored priorities, which must belong to stored
//! documents, under the priority policy), and the clusters of two or more
//! are exactly the groups that [`crate::Database::groups`] computes from
//! scratch.

use super::upkeep::rank;
use crate::config::Representative;
use crate::db::maintain::CheckReport;
use crate::pipeline::Pipeline;
use crate::query::pairs::Snapshot;
use crate::store::cache::RecordCache;
use crate::store::clusters::ClusterRead;
use crate::store::priorities;
use crate::store::tables::{Index, ReadTables, Reader};
use crate::Result;
use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata};

/// Checks the clusters of the snapshot `txn` (`tables` its document
/// tables); problems go to `report`.
pub(crate) fn check(
    txn: &ReadTransaction,
    tables: &ReadTables,
    cache: &RecordCache,
    pipeline: &Pipeline,
    report: &mut CheckReport,
) -> Result<()> {
    let Some((policy, threshold)) = pipeline.clusters() else {
        return Ok(());
    };
    let Some(clusters) = ClusterRead::open(txn)? else {
        report.problem("the settings keep clusters but the file has no cluster tables".into());
        return Ok(());
    };
    let priorities = check_priorities(txn, tables, policy, report)?;
    let priority = |id| match &priorities {
        Some(table) => priorities::priority_of(table, id),
        None => Ok(0),
    };
    check_rows(tables, &clusters, policy, &priority, report)?;
    let (_, clustered) = clusters.counts()?;
    let documents = tables.docs.len()?;
    if clustered != documents {
        report.problem(format!(
            "{clustered} documents are in clusters, {documents} are stored"
        ));
    }
    let snapshot = Snapshot {
        tables,
        cache,
        pipeline,
    };
    let groups = snapshot.groups(threshold)?;
    let mut grouped = 0u64;
    for group in &groups.groups {
        let mut cluster = None;
        for (key, _) in group {
            let found = match tables.id_of(key)? {
                Some(id) => clusters.cluster_of(id)?,
                None => None,
            };
            if found.is_none() || (cluster.is_some() && found != cluster) {
                report.problem(format!(
                    "document `{key}` is not in the cluster of its group's other members"
                ));
            }
            cluster = cluster.or(found);
        }
        if let Some(row) = match cluster {
            Some(id) => clusters.row(id)?,
            None => None,
        } {
            if row.size != group.len() as u64 {
                report.problem(format!(
                    "cluster {} has {} members, its group {}",
                    row.id,
                    row.size,
                    group.len()
                ));
            }
        }
        grouped += 1;
    }
    let mut larger = 0u64;
    for entry in clusters.clusters.iter()? {
        if entry?.1.value().1 > 1 {
            larger += 1;
        }
    }
    if larger != grouped {
        report.problem(format!(
            "{larger} clusters have two or more members, the index groups {grouped}"
        ));
    }
    Ok(())
}

/// The priority table of a file whose policy ranks by priority (`None`
/// for other policies, or none stored), checked against the documents.
fn check_priorities(
    txn: &ReadTransaction,
    tables: &ReadTables,
    policy: Representative,
    report: &mut CheckReport,
) -> Result<Option<redb::ReadOnlyTable<u64, i64>>> {
    if policy != Representative::Priority {
        return Ok(None);
    }
    let table = priorities::open_read(txn)?;
    if let Some(table) = &table {
        let stored = |id| Ok(tables.docs.get(id)?.is_some());
        priorities::check(table, stored, |p| report.problem(p))?;
    }
    Ok(table)
}

/// Each cluster's row against its members: the size, and the
/// representative a member and the best by the policy.
fn check_rows(
    tables: &ReadTables,
    clusters: &ClusterRead,
    policy: Representative,
    priority: &dyn Fn(u64) -> Result<i64>,
    report: &mut CheckReport,
) -> Result<()> {
    for entry in clusters.clusters.iter()? {
        let (id, value) = entry?;
        let (id, (representative, size)) = (id.value(), value.value());
        let members = clusters.members_of(id)?;
        if members.len() as u64 != size {
            report.problem(format!(
                "cluster {id} records {size} members and has {}",
                members.len()
            ));
        }
        let mut best = None;
        for &member in &members {
            if clusters.cluster_of(member)? != Some(id) {
                report.problem(format!(
                    "document {member} is listed in cluster {id} but filed elsewhere"
                ));
            }
            if tables.doc(member)?.is_none() {
                report.problem(format!("cluster {id} lists missing document {member}"));
                continue;
            }
            let ranked = rank(tables, policy, member, priority)?;
            if best.as_ref().is_none_or(|(r, _)| ranked < *r) {
                best = Some((ranked, member));
            }
        }
        if let Some((_, best)) = best {
            if best != representative {
                report.problem(format!(
                    "cluster {id}'s representative is document {representative}, \
                     the policy picks {best}"
                ));
            }
        }
    }
    Ok(())
}
