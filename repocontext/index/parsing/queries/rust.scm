; Outline of a Rust file. Capture names are described in python.scm. Functions directly
; inside an impl or trait become methods.

(function_item name: (identifier) @name) @definition.function

(function_signature_item name: (identifier) @name) @definition.function

(struct_item name: (type_identifier) @name) @definition.struct

(union_item name: (type_identifier) @name) @definition.struct

(enum_item name: (type_identifier) @name) @definition.enum

(trait_item name: (type_identifier) @name) @definition.trait

(type_item name: (type_identifier) @name) @definition.type

(associated_type name: (type_identifier) @name) @definition.type

((const_item name: (identifier) @name) @definition.constant
  (#not-eq? @name "_"))

(static_item name: (identifier) @name) @definition.constant

(mod_item name: (identifier) @name body: (declaration_list)) @definition.module

(macro_definition name: (identifier) @name) @definition.macro

; An impl is named after the type it implements (`impl Display for Point` -> `Point`;
; `for &mut Point` -> `Point`); a type without a name is named as written (`f32`, `[u32]`).
(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
    (primitive_type) @name
    (array_type) @name
    (tuple_type) @name
    (dynamic_type) @name
    (pointer_type) @name
    (function_type) @name
    (reference_type type: [
      (type_identifier) @name
      (generic_type type: (type_identifier) @name)
      (scoped_type_identifier name: (type_identifier) @name)
      (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
      (primitive_type) @name
      (array_type) @name
      (tuple_type) @name
      (dynamic_type) @name
    ])
  ]) @definition.impl

(mod_item name: (identifier) @spec !body) @import.rust_mod

(use_declaration argument: (_) @spec) @import.rust_use

(extern_crate_declaration name: (identifier) @spec) @import.rust_use
