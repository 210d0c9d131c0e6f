//! Column kinds: an Arrow builder each, with the field it makes and the values it takes.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder, StructBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::extension::Json as JsonType;
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use chrono::{DateTime, Utc};

/// What every column kind does besides taking values.
pub trait Column {
    /// The column's Arrow field.
    fn field(&self, name: &str, nullable: bool) -> Field;

    /// The rows so far as one array; the builder starts the next batch. With `dictionaries`
    /// false, a dictionary column gives plain strings instead.
    fn finish(&mut self, dictionaries: bool) -> ArrayRef;
}

/// A `Utf8` column.
pub struct Text(StringBuilder);

impl Default for Text {
    fn default() -> Self {
        Text(StringBuilder::new())
    }
}

impl Text {
    /// Appends a value or a null; returns the bytes of text it added.
    pub fn append<S: AsRef<str>>(&mut self, value: Option<S>) -> usize {
        let bytes = value.as_ref().map_or(0, |v| v.as_ref().len());
        self.0.append_option(value);
        bytes
    }
}

impl Column for Text {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Utf8, nullable)
    }

    /// Leaves the builder room for as much as it held, so that the next batch does not grow it
    /// again from nothing (every growth copies the column).
    fn finish(&mut self, _: bool) -> ArrayRef {
        let array = self.0.finish();
        self.0 = StringBuilder::with_capacity(array.len(), array.value_data().len());
        Arc::new(array)
    }
}

/// A `Utf8` column of JSON documents, tagged with the canonical `arrow.json` extension.
#[derive(Default)]
pub struct Json(Text);

impl Json {
    /// Appends a document or a null; returns the bytes of text it added.
    pub fn append<S: AsRef<str>>(&mut self, value: Option<S>) -> usize {
        self.0.append(value)
    }
}

impl Column for Json {
    fn field(&self, name: &str, nullable: bool) -> Field {
        self.0.field(name, nullable).with_extension_type(JsonType::default())
    }

    fn finish(&mut self, dictionaries: bool) -> ArrayRef {
        self.0.finish(dictionaries)
    }
}

/// A string dictionary builder.
type Dict = StringDictionaryBuilder<Int32Type>;

/// A string dictionary column (`Dictionary(Int32, Utf8)`), which looks each run of equal values
/// up once: events of one session repeat the same file, model and directory row after row.
#[derive(Default)]
pub struct Runs {
    builder: Dict,
    /// The value of the rows not yet appended, unless they are null.
    value: String,
    null: bool,
    /// How many rows hold it.
    rows: usize,
}

impl Runs {
    /// Appends a value or a null; a dictionary adds no text per row, so this returns 0.
    pub fn append<S: AsRef<str>>(&mut self, value: Option<S>) -> usize {
        let value = value.as_ref().map(AsRef::as_ref);
        let same = self.rows > 0 && value.map_or(self.null, |v| !self.null && self.value == v);
        if !same {
            self.append_run();
            self.null = value.is_none();
            self.value.clear();
            self.value.push_str(value.unwrap_or_default());
        }
        self.rows += 1;
        0
    }

    /// Appends the rows not yet appended to the builder.
    fn append_run(&mut self) {
        if self.rows == 0 {
            return;
        }
        let value = (!self.null).then_some(self.value.as_str());
        self.builder.append_options(value, std::mem::take(&mut self.rows));
    }
}

impl Column for Runs {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), nullable)
    }

    fn finish(&mut self, dictionaries: bool) -> ArrayRef {
        self.append_run();
        let array = self.builder.finish();
        if dictionaries {
            return Arc::new(array);
        }
        let strings = array.downcast_dict::<StringArray>().expect("a dictionary of strings");
        Arc::new(strings.into_iter().collect::<StringArray>())
    }
}

/// An `Int64` column.
#[derive(Default)]
pub struct Int(Int64Builder);

impl Int {
    /// Appends a value or a null; returns 0 (no text).
    pub fn append(&mut self, value: Option<i64>) -> usize {
        self.0.append_option(value);
        0
    }
}

impl Column for Int {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Int64, nullable)
    }

    fn finish(&mut self, _: bool) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A `Float64` column.
#[derive(Default)]
pub struct Float(Float64Builder);

impl Float {
    /// Appends a value or a null; returns 0 (no text).
    pub fn append(&mut self, value: Option<f64>) -> usize {
        self.0.append_option(value);
        0
    }
}

impl Column for Float {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Float64, nullable)
    }

    fn finish(&mut self, _: bool) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A `Boolean` column.
#[derive(Default)]
pub struct Flag(BooleanBuilder);

impl Flag {
    /// Appends a value or a null; returns 0 (no text).
    pub fn append(&mut self, value: Option<bool>) -> usize {
        self.0.append_option(value);
        0
    }
}

impl Column for Flag {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Boolean, nullable)
    }

    fn finish(&mut self, _: bool) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A `Timestamp(Microsecond, "UTC")` column.
pub struct Time(TimestampMicrosecondBuilder);

impl Default for Time {
    fn default() -> Self {
        Time(TimestampMicrosecondBuilder::new().with_timezone("UTC"))
    }
}

impl Time {
    /// Appends a time or a null; returns 0 (no text).
    pub fn append(&mut self, value: Option<DateTime<Utc>>) -> usize {
        self.0.append_option(value.map(|t| t.timestamp_micros()));
        0
    }
}

impl Column for Time {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), nullable)
    }

    fn finish(&mut self, _: bool) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A struct column of `N` nullable `Int64` fields, named in order.
pub struct Ints<const N: usize> {
    names: [&'static str; N],
    builder: StructBuilder,
}

impl<const N: usize> Ints<N> {
    /// An empty column whose struct has these fields.
    pub fn new(names: [&'static str; N]) -> Self {
        Ints { names, builder: StructBuilder::from_fields(int_fields(&names), 0) }
    }

    /// Appends the fields' values, or a null struct; returns 0 (no text).
    pub fn append(&mut self, values: Option<[Option<i64>; N]>) -> usize {
        for i in 0..N {
            let v = values.and_then(|v| v[i]);
            self.builder.field_builder::<Int64Builder>(i).expect("an Int64 field").append_option(v);
        }
        self.builder.append(values.is_some());
        0
    }
}

fn int_fields(names: &[&str]) -> Fields {
    names.iter().map(|n| Field::new(*n, DataType::Int64, true)).collect()
}

impl<const N: usize> Column for Ints<N> {
    fn field(&self, name: &str, nullable: bool) -> Field {
        Field::new(name, DataType::Struct(int_fields(&self.names)), nullable)
    }

    fn finish(&mut self, _: bool) -> ArrayRef {
        Arc::new(self.builder.finish())
    }
}

/// A `List(Utf8)` column.
pub struct Strings(ListBuilder<StringBuilder>);

impl Default for Strings {
    fn default() -> Self {
        Strings(ListBuilder::new(StringBuilder::new()))
    }
}

impl Strings {
    /// Appends a list (never null); returns the bytes of text it added.
    pub fn append(&mut self, values: &[String]) -> usize {
        for v in values {
            self.0.values().append_value(v);
        }
        self.0.append(true);
        values.iter().map(String::len).sum()
    }
}

impl Column for Strings {
    fn field(&self, name: &str, nullable: bool) -> Field {
        let item = Arc::new(Field::new("item", DataType::Utf8, true));
        Field::new(name, DataType::List(item), nullable)
    }

    fn finish(&mut self, _: bool) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Runs of equal values give the arrays a lookup per row gives, batch after batch, as a
        /// dictionary or as plain strings.
        #[test]
        fn runs_build_the_arrays_a_lookup_per_row_builds(
            batches in prop::collection::vec(
                prop::collection::vec(prop::option::of(prop::sample::select(vec!["", "a", "b", "ab"])), 0..12),
                1..4,
            ),
            dictionaries: bool,
        ) {
            let (mut runs, mut rows) = (Runs::default(), Dict::new());
            for batch in batches {
                for value in &batch {
                    runs.append(*value);
                    rows.append_option(*value);
                }
                let expected = rows.finish();
                let built = runs.finish(dictionaries);
                if dictionaries {
                    // The same keys into the same values, not only the same strings.
                    let built = built.as_dictionary::<Int32Type>();
                    prop_assert_eq!(built.keys(), expected.keys());
                    prop_assert_eq!(built.values(), expected.values());
                } else {
                    prop_assert_eq!(built.as_string::<i32>(), &StringArray::from(batch.clone()));
                }
            }
        }
    }
}
