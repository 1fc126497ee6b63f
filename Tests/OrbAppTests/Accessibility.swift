import Foundation
import OrbTestSupport
import XCTest

/// The player's window as a screen reader sees it: its accessible tree over AT-SPI (GTK 4 publishes every shown
/// widget with its role, name and text), read and driven with python3-gi's Atspi bindings. Driving a control through
/// it is what an assistive technology does, and it does not depend on where the control is drawn.
enum Accessibility {
  /// One accessible object: `role` as AT-SPI names it ("push button", "label", "slider"), `name` its accessible
  /// name, `text` what a text object holds, `value` a slider's value, `focused` whether it has the keyboard.
  struct Node {
    var role: String
    var name: String
    var text: String
    var value: Double?
    /// It has the keyboard focus.
    var focused: Bool
    /// A check box that is on, or a toggle button that is pressed.
    var checked = false
    var children: [Node]

    /// This node and all below it, depth first.
    var all: [Node] { [self] + children.flatMap(\.all) }
  }

  private static let python = "/usr/bin/python3"

  /// Lists or drives the tree of the application whose process id is argv[1]:
  ///   tree                 the tree as JSON
  ///   click ROLE NAME      the first action of the first shown ROLE named NAME
  ///   set ROLE NAME VALUE  a slider's value
  private static let script = #"""
    import gi, json, sys
    gi.require_version('Atspi', '2.0')
    from gi.repository import Atspi

    pid, command = int(sys.argv[1]), sys.argv[2]

    def application():
        desktop = Atspi.get_desktop(0)
        for i in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(i)
            if app is not None and app.get_process_id() == pid:
                return app
        sys.exit('no accessible application with process id %d' % pid)

    def node(a):
        n = {'role': a.get_role_name(), 'name': a.get_name() or '', 'text': '', 'children': [],
             'focused': a.get_state_set().contains(Atspi.StateType.FOCUSED),
             'checked': a.get_state_set().contains(Atspi.StateType.CHECKED)
                        or a.get_state_set().contains(Atspi.StateType.PRESSED)}
        if 'Text' in a.get_interfaces():
            n['text'] = Atspi.Text.get_text(a, 0, Atspi.Text.get_character_count(a))
        if 'Value' in a.get_interfaces():
            n['value'] = Atspi.Value.get_current_value(a)
        for i in range(a.get_child_count()):
            c = a.get_child_at_index(i)
            if c is not None:
                n['children'].append(node(c))
        return n

    def find(a, role, name):
        if a.get_role_name() == role and (a.get_name() or '') == name:
            return a
        for i in range(a.get_child_count()):
            c = a.get_child_at_index(i)
            found = c is not None and find(c, role, name)
            if found:
                return found
        return None

    app = application()
    if command == 'tree':
        print(json.dumps(node(app)))
    else:
        target = find(app, sys.argv[3], sys.argv[4])
        if target is None:
            sys.exit('no shown %s named %r' % (sys.argv[3], sys.argv[4]))
        if command == 'click':
            Atspi.Action.do_action(target, 0)
        elif command == 'set':
            Atspi.Value.set_current_value(target, float(sys.argv[5]))
    """#

  /// Fails the test unless python3-gi's Atspi bindings are there (outside CI it skips).
  static func require() throws {
    let has = Tool.run(python, ["-c", "import gi; gi.require_version('Atspi', '2.0')"]).succeeded
    try Requirement.require(has, "python3-gi's Atspi 2.0 bindings (gir1.2-atspi-2.0) are not installed")
  }

  private static func call(_ pid: Int32, _ arguments: [String]) throws -> String {
    let result = Tool.run(python, ["-W", "ignore", "-c", script, "\(pid)"] + arguments, timeout: 30)
    guard result.succeeded else {
      throw TestMediaError("AT-SPI \(arguments.joined(separator: " ")): \(result.stderr)")
    }
    return result.stdout
  }

  /// The accessible tree of process `pid`'s application.
  static func tree(_ pid: Int32) throws -> Node {
    let json = try JSONSerialization.jsonObject(with: Data(try call(pid, ["tree"]).utf8))
    func node(_ any: Any) throws -> Node {
      guard let d = any as? [String: Any], let role = d["role"] as? String else {
        throw TestMediaError("AT-SPI: not a node: \(any)")
      }
      return Node(
        role: role, name: d["name"] as? String ?? "", text: d["text"] as? String ?? "",
        value: d["value"] as? Double, focused: d["focused"] as? Bool ?? false, checked: d["checked"] as? Bool ?? false,
        children: try (d["children"] as? [Any] ?? []).map(node))
    }
    return try node(json)
  }

  /// Activates the shown control `role` named `name` (a button's click) as a screen reader would.
  static func click(_ pid: Int32, _ name: String, role: String = "push button") throws {
    _ = try call(pid, ["click", role, name])
  }

  /// Moves the shown slider named `name` to `value`.
  static func set(_ pid: Int32, slider name: String, to value: Double) throws {
    _ = try call(pid, ["set", "slider", name, "\(value)"])
  }

  /// Waits up to `timeout` seconds for a tree for which `check` holds; the last tree read.
  @discardableResult
  static func wait(_ pid: Int32, timeout: Double = 10, until check: (Node) -> Bool) throws -> Node {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var last = try tree(pid)
    while !check(last) && Date() < deadline {
      usleep(200_000)
      last = try tree(pid)
    }
    return last
  }
}
