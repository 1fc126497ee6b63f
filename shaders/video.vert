#version 450
// One triangle that covers the whole target; `position` runs 0..1 across it, origin top-left.
layout(location = 0) out vec2 position;

void main() {
  vec2 p = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
  position = p;
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
