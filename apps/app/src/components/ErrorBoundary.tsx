import { Alert, Button, Stack, Text } from '@mantine/core';
import { Component, type ErrorInfo, type ReactNode } from 'react';

interface State {
  error?: Error;
}

/**
 * Shows what failed instead of a blank page when a screen throws while rendering, or when a
 * lazily loaded part of the app cannot be fetched (e.g. after a new version was deployed).
 */
export class ErrorBoundary extends Component<{ children: ReactNode; resetKey?: string }, State> {
  override state: State = {};

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error(error, info.componentStack);
  }

  override componentDidUpdate(previous: { resetKey?: string }): void {
    // Navigating elsewhere gives the new screen a fresh start.
    if (this.state.error && previous.resetKey !== this.props.resetKey) {
      this.setState({ error: undefined });
    }
  }

  override render(): ReactNode {
    if (!this.state.error) {
      return this.props.children;
    }
    return (
      <Alert color="red" title="Something went wrong" role="alert">
        <Stack gap="xs">
          <Text size="sm">{this.state.error.message}</Text>
          <Button size="compact-sm" variant="light" w="fit-content" onClick={() => window.location.reload()}>
            Reload
          </Button>
        </Stack>
      </Alert>
    );
  }
}
