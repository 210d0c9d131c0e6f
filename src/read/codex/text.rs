//! What a message's text says of itself: context Codex injected, image wrappers, image URLs.

use crate::model::Part;

/// Text prefixes of context Codex injects into the conversation (`codex-format.md` §4.1).
const INJECTED_PREFIXES: [&str; 15] = [
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "<environment_context>",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<permissions instructions>",
    "<model_switch>",
    "<collaboration_mode>",
    "<realtime_conversation>",
    "<personality_spec>",
    "<apps_instructions>",
    "<skills_instructions>",
    "<plugins_instructions>",
];

/// Whether a user message's text is context Codex injected rather than typed.
pub(super) fn is_injected_text(text: &str) -> bool {
    let t = text.trim_start();
    INJECTED_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// Whether a text part only wraps an image (`<image name=…>`, `</image>`).
pub(super) fn is_image_wrapper(text: &str) -> bool {
    let t = text.trim();
    t == "<image>" || t == "</image>" || (t.starts_with("<image name=") && t.ends_with('>'))
}

/// An image part from a URL; `data:` URLs are split into media type and base64 data.
pub fn image_part(url: &str) -> Part {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((media_type, data)) = rest.split_once(";base64,")
    {
        return Part::Image { media_type: Some(media_type.to_owned()), data: Some(data.to_owned()), url: None };
    }
    Part::Image { media_type: None, data: None, url: Some(url.to_owned()) }
}
