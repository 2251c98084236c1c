//! Which integration an event comes from, and the Spark and Airflow mappings: the twins of
//! `consumer/extract/__init__.py` (`integration`), `spark.py` and `airflow.py`.
//! dbt, Flink, Hive and Debezium events decline (the Python path maps them).

use crate::facets::{
    collapse_spaces, first_of_list, lower, obj, small_int, stop, strip, text, text_of, truncate,
    truthy, upper, Obj, R,
};
use crate::runs::{
    as_operation, bare_run, generic, parent_of, typed_job, Event, OperationFields, Parent,
    Placement, RunFields, MAX_NAME,
};
use crate::Extractor;
use pyo3::prelude::*;

/// The integration's extractor (`EXTRACTORS.get(integration(event), _generic)`); the
/// integrations with a mapping of their own other than these two decline.
pub fn extract(x: &mut Extractor, py: Python<'_>, ev: &Event) -> R<Placement> {
    match integration(x, ev)?.as_str() {
        "SPARK" => spark(x, py, ev),
        "AIRFLOW" => airflow(x, py, ev),
        other if x.rules.integrations.contains(other) => {
            Err(stop("integration mapped in Python only"))
        }
        _ => generic(
            x,
            py,
            ev,
            "UNKNOWN",
            OperationFields::default(),
            true,
            RunFields::default(),
        ),
    }
}

/// `integration(event)`: from the jobType facet, else from the producer URL.
fn integration(x: &Extractor, ev: &Event) -> R<String> {
    if let Some(declared) = text(obj(ev.env.job_facets, &["jobType"]), "integration", 100)? {
        return upper(strip(&declared)?);
    }
    let producer = lower(ev.env.producer)?;
    let found = x
        .rules
        .producers
        .iter()
        .find(|(marker, _)| producer.contains(marker.as_str()));
    Ok(found
        .map_or("GENERIC", |(_, name)| name.as_str())
        .to_string())
}

fn job_type_facet(ev: &Event) -> R<String> {
    let declared = text_of(obj(ev.env.job_facets, &["jobType"]), "jobType")?;
    upper(declared.as_deref().unwrap_or(""))
}

// ---- Spark ----

fn spark(x: &mut Extractor, py: Python<'_>, ev: &Event) -> R<Placement> {
    let job_type = job_type_facet(ev)?;
    if x.rules.spark_operation_types.contains(&job_type) {
        if let Some(parent) = parent_of(x, py, ev)? {
            return spark_operation(x, py, ev, &parent, job_type);
        }
    }
    let has_io = !(ev.env.inputs.is_empty() && ev.env.outputs.is_empty());
    let fields = application_fields(ev)?;
    generic(
        x,
        py,
        ev,
        "SPARK_APPLICATION",
        OperationFields::default(),
        has_io,
        fields,
    )
}

/// `application_fields`: run fields of the application from whichever facets are there.
fn application_fields(ev: &Event) -> R<RunFields> {
    let facets = ev.env.run_facets;
    let details = obj(facets, &["spark_applicationDetails"]);
    let mut running_log_url = first_of_list(text_of(details, "proxyUrl")?)?;
    if running_log_url.is_none() {
        running_log_url = first_of_list(text_of(details, "uiWebUrl")?)?;
    }
    let mut external_id = text_of(details, "applicationId")?;
    if external_id.is_none() {
        external_id = text_of(obj(facets, &["gcp_dataproc_spark"]), "appId")?;
    }
    if external_id.is_none() {
        external_id = text_of(
            obj(facets, &["spark_properties", "properties"]),
            "spark.app.id",
        )?;
    }
    Ok(RunFields {
        external_id: external_id.map(|s| s.into_owned()),
        user: text_of(details, "userName")?.map(|s| s.into_owned()),
        running_log_url,
        persistent_log_url: first_of_list(text_of(details, "historyUrl")?)?,
        ..RunFields::default()
    })
}

/// `_operation`: a job-level event, an operation of the application run its parent names.
fn spark_operation(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    parent: &Parent,
    job_type: String,
) -> R<Placement> {
    typed_job(x, py, &parent.job, "SPARK_APPLICATION", None)?;
    let record = bare_run(x, py, ev, parent.id, &parent.job, application_fields(ev)?)?;
    x.out.runs.push(record);
    let details = obj(ev.env.run_facets, &["spark_jobDetails"]);
    let fields = OperationFields {
        name: operation_name(ev.env.job_name, &parent.job.name)?,
        type_: Some(job_type),
        position: small_int(details, "jobId"),
        group: text_of(details, "jobGroup")?.map(|s| s.into_owned()),
        description: text_of(details, "jobDescription")?.map(|s| s.into_owned()),
    };
    as_operation(x, py, ev, parent, fields)
}

/// `operation_name`: the job name without its `<application>.` prefix, spaces collapsed.
fn operation_name(job_name: &str, application: &str) -> R<Option<String>> {
    let collapsed = collapse_spaces(job_name)?;
    let name = strip(&collapsed)?;
    let prefix = format!("{application}.");
    let short = match name.strip_prefix(prefix.as_str()) {
        Some(rest) if !rest.is_empty() => rest,
        _ => name,
    };
    let cut = truncate(short, MAX_NAME);
    Ok((!cut.is_empty()).then(|| cut.to_string()))
}

// ---- Airflow ----

fn airflow(x: &mut Extractor, py: Python<'_>, ev: &Event) -> R<Placement> {
    let facets = ev.env.run_facets;
    let facet = truthy(obj(facets, &["airflow"])).or_else(|| obj(facets, &["airflowDagRun"]));
    let dag_run = obj(facet, &["dagRun"]);
    let run_type = text(dag_run, "run_type", 100)?;
    let mut user = owner(x, obj(facet, &["task"]))?;
    if user.is_none() {
        user = owner(x, obj(facet, &["dag"]))?;
    }
    let mut fields = RunFields {
        external_id: text_of(dag_run, "run_id")?.map(|s| s.into_owned()),
        start_reason: run_type.as_deref().map(upper).transpose()?,
        user,
        ..RunFields::default()
    };
    if is_dag(ev, facet)? {
        return generic(
            x,
            py,
            ev,
            "AIRFLOW_DAG",
            OperationFields::default(),
            true,
            fields,
        );
    }
    let instance = obj(facet, &["taskInstance"]);
    let operation = task_operation(ev, facet)?;
    fields.attempt = small_int(instance, "try_number");
    fields.persistent_log_url = text_of(instance, "log_url")?.map(|s| s.into_owned());
    generic(x, py, ev, "AIRFLOW_TASK", operation, true, fields)
}

fn is_dag(ev: &Event, facet: Option<&Obj<'_>>) -> R<bool> {
    let kind = job_type_facet(ev)?;
    if !kind.is_empty() {
        return Ok(kind == "DAG");
    }
    let has_instance = facet.is_some_and(|f| f.contains_key("taskInstance"));
    Ok(!has_instance && truthy(obj(ev.env.run_facets, &["parent"])).is_none())
}

fn task_operation(ev: &Event, facet: Option<&Obj<'_>>) -> R<OperationFields> {
    let task = obj(facet, &["task"]);
    let mut dag_id = text_of(obj(ev.env.run_facets, &["parent", "job"]), "name")?;
    if dag_id.is_none() {
        dag_id = text_of(obj(facet, &["dag"]), "dag_id")?;
    }
    let job_name = ev.env.job_name;
    let fallback = match &dag_id {
        Some(dag) => job_name
            .strip_prefix(format!("{dag}.").as_str())
            .unwrap_or(job_name),
        None => job_name,
    };
    let task_id = text_of(task, "task_id")?;
    let name = match task_id {
        Some(id) => Some(id.into_owned()),
        None => (!fallback.is_empty()).then(|| fallback.to_string()),
    };
    Ok(OperationFields {
        name,
        type_: None,
        description: text_of(task, "operator_class")?.map(|s| s.into_owned()),
        position: small_int(obj(facet, &["taskInstance"]), "map_index"),
        group: text_of(obj(task, &["task_group"]), "group_id")?.map(|s| s.into_owned()),
    })
}

/// `owner`: an owner that names someone (not Airflow's default, not masked `***`).
fn owner(x: &Extractor, facet: Option<&Obj<'_>>) -> R<Option<String>> {
    let raw = text(facet, "owner", 200)?;
    let name = strip(raw.as_deref().unwrap_or(""))?;
    let anonymous = x.rules.anonymous_owners.contains(&lower(name)?);
    if anonymous || name.trim_matches('*').is_empty() {
        return Ok(None);
    }
    Ok(Some(name.to_string()))
}
