//! Interim (being written).
use super::emit::Emitter;
use crate::core::tool::ToolSet;
use serde_json::Value;
pub struct YamlScanner;
impl YamlScanner {
    pub fn new(_t: ToolSet) -> Self {
        YamlScanner
    }
    pub fn feed(&mut self, t: &str, em: &mut Emitter) {
        em.text(t)
    }
    pub fn finish(&mut self, _em: &mut Emitter) {}
}
pub fn format_call(name: &str, _i: &Value) -> String {
    name.to_string()
}
pub fn format_result(name: &str, _r: &str) -> String {
    name.to_string()
}
pub fn prompt_section(_n: &str, _e: &Value) -> String {
    String::new()
}
