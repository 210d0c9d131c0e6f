//! Content blocks of a Claude Code message: read as typed [`Block`]s, kept whole, or made
//! content parts.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::raw::{Block, MediaSource};
use crate::model::{Json, Part};
use crate::read::Object;

/// A content block read as a [`Block`], with its object; `None` for one of a shape this reader
/// does not know.
pub(super) fn read_block<'o, 'a>(
    block: &'o Result<Cow<'o, Object<'a>>, &'a RawValue>,
) -> Option<(&'o Object<'a>, Block<'a>)> {
    let object = block.as_ref().ok()?;
    Some((object, object.get().ok()?))
}

/// A content block's JSON text.
pub(super) fn block_text<'a>(block: &Result<Cow<'_, Object<'a>>, &'a RawValue>) -> &'a str {
    match block {
        Ok(object) => object.text(),
        Err(raw) => raw.get(),
    }
}

/// A content block kept whole.
pub(super) fn block_json(block: &Result<Cow<'_, Object<'_>>, &RawValue>) -> Json {
    match block {
        Ok(object) => object.to_json(),
        Err(raw) => Json::from_raw(raw),
    }
}

/// A text, image or document block as a content part; `None` for other blocks.
pub(super) fn content_part(block: &Block<'_>) -> Option<Part> {
    let media = |source: &Option<MediaSource<'_>>| {
        let s = source.as_ref();
        (
            s.and_then(|s| s.media_type.as_deref().map(str::to_owned)),
            s.and_then(|s| s.data.as_deref().map(str::to_owned)),
            s.and_then(|s| s.url.as_deref().map(str::to_owned)),
        )
    };
    match block.block_type.as_ref() {
        "text" => Some(Part::Text { text: block.text.as_deref().unwrap_or_default().to_owned() }),
        "image" => {
            let (media_type, data, url) = media(&block.source);
            Some(Part::Image { media_type, data, url })
        }
        "document" => {
            let (media_type, data, url) = media(&block.source);
            Some(Part::Document { media_type, data, url })
        }
        _ => None,
    }
}
