; Outline of a Ruby file. Capture names are described in python.scm. Every `def` is a method,
; `def self.x` included.

(module name: (_) @name) @definition.module

(class name: (_) @name) @definition.class

(method name: (_) @name) @definition.method

(singleton_method name: (_) @name) @definition.method

((call
  !receiver
  method: (identifier) @_method
  arguments: (argument_list . (string . (string_content) @spec .))) @import.ruby_require
  (#eq? @_method "require"))

((call
  !receiver
  method: (identifier) @_method
  arguments: (argument_list . (string . (string_content) @spec .))) @import.ruby_require_relative
  (#eq? @_method "require_relative"))
