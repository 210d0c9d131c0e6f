//! The columnar schemas of events and sessions, and builders that fill them.
//!
//! Each table is declared once, as the list of its columns in order ([`table!`]): name, kind,
//! nullability and the value a row gives. The Arrow schema, the builders, appending a row and
//! assembling a batch all follow from that list, so a column's name cannot part from its values,
//! and a value of the wrong type for its column does not compile.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::model::SCHEMA_VERSION;

/// Declares a table: its columns in order, each as
/// `name: Kind [= constructor], required|nullable [, in_path] => value;`,
/// where `value` is an expression of the row (and of the cells computed for it) that the kind's
/// `append` takes. A column marked `in_path` is a partition column: a table made with
/// `with_path_columns` false leaves it out, because a partitioned dataset's paths carry it.
macro_rules! table {
    (
        $(#[$doc:meta])*
        $table:ident($row:ident: $row_type:ty, $cells:tt: $cells_type:ty) {
            $($column:ident: $kind:ty $(= $init:expr)?, $null:ident $(, $in_path:ident)? => $value:expr;)*
        }
    ) => {
        $(#[$doc])*
        struct $table {
            /// Whether the columns marked `in_path` are written.
            with_path_columns: bool,
            $($column: $kind,)*
        }

        impl $table {
            /// Empty columns; `with_path_columns` false leaves out the columns marked `in_path`.
            fn new(with_path_columns: bool) -> Self {
                $table { with_path_columns, $($column: table!(@init $kind $(, $init)?),)* }
            }

            /// The table's fields, in order.
            fn fields(&self) -> Vec<::arrow_schema::Field> {
                let mut fields = Vec::new();
                $(if self.with_path_columns || !table!(@in_path $($in_path)?) {
                    fields.push(super::Column::field(&self.$column, stringify!($column), table!(@nullable $null)));
                })*
                fields
            }

            /// Appends one row; returns the bytes of text it added.
            fn append(&mut self, $row: &$row_type, $cells: &$cells_type) -> usize {
                let mut bytes = 0;
                $(if self.with_path_columns || !table!(@in_path $($in_path)?) {
                    bytes += self.$column.append($value);
                })*
                bytes
            }

            /// The rows appended so far as arrays, in the order of the fields; see
            /// [`Column::finish`](super::Column::finish).
            fn finish(&mut self, dictionaries: bool) -> Vec<::arrow_array::ArrayRef> {
                let mut columns = Vec::new();
                $(if self.with_path_columns || !table!(@in_path $($in_path)?) {
                    columns.push(super::Column::finish(&mut self.$column, dictionaries));
                })*
                columns
            }
        }
    };
    (@init $kind:ty) => { <$kind>::default() };
    (@init $kind:ty, $init:expr) => { $init };
    (@in_path) => { false };
    (@in_path in_path) => { true };
    (@nullable required) => { false };
    (@nullable nullable) => { true };
}

mod events;
mod kinds;
mod sessions;

pub use events::{EventColumns, event_schema};
use kinds::Column;
pub use sessions::{session_batch, session_schema};

/// Key-value metadata of every file: what it holds and which versions wrote it.
pub fn metadata(table: &str) -> HashMap<String, String> {
    HashMap::from([
        ("agentlog.table".to_owned(), table.to_owned()),
        ("agentlog.schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
        ("agentlog.version".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
    ])
}

/// The schema readers are given: every string column plain `Utf8`, without the dictionary
/// type or the `arrow.json` extension that the Parquet writer uses for its encodings.
///
/// Readers differ in what they accept: Polars rejects dictionary deltas and cannot cast or
/// query extension columns, Spark refuses extension types, and pandas and pyarrow fail to unify
/// dictionaries across files. Plain strings load everywhere; Parquet still stores these columns
/// dictionary-encoded, and its JSON columns keep the JSON logical type, which DuckDB reads as
/// `JSON`.
pub fn plain(schema: &Schema) -> SchemaRef {
    let fields = schema.fields().iter().map(|f| {
        let data_type = match f.data_type() {
            DataType::Dictionary(_, values) => values.as_ref().clone(),
            other => other.clone(),
        };
        let mut metadata = f.metadata().clone();
        metadata.retain(|key, _| !key.starts_with("ARROW:extension:"));
        Field::new(f.name(), data_type, f.is_nullable()).with_metadata(metadata)
    });
    Arc::new(Schema::new_with_metadata(fields.collect::<Vec<_>>(), schema.metadata().clone()))
}

/// A count as an `Int64` value, saturating.
fn int(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}
