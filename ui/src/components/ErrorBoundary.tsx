import { Component, type ReactNode } from "react";

/** A view that throws while drawing shows what happened instead of a blank window. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  render() {
    if (this.state.error) {
      return (
        <div className="error-panel" role="alert">
          <strong>This view failed to draw</strong>
          <p>{this.state.error.message}</p>
          <p className="hint">Switch to another screen and back, or restart the app; your data is untouched.</p>
          <button type="button" onClick={() => this.setState({ error: null })}>Try again</button>
        </div>
      );
    }
    return this.props.children;
  }
}
