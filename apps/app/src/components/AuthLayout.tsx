import { Anchor, Center, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** The centred card of the sign-in, register and password pages. */
export function AuthLayout({ title, children }: { title: string; children: ReactNode }): ReactNode {
  return (
    <Center mih="100vh" p="md" bg="gray.0">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={420} component="main">
        <Stack>
          <Text fw={700} size="xl" c="ember.7" ta="center">
            Hearth
          </Text>
          <Title order={2} ta="center" size="h3">
            {title}
          </Title>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}

/** The line under an auth form that leads to another auth page: "New here? Register a project". */
export function AuthLink({ prompt, to, children }: { prompt: string; to: string; children: ReactNode }): ReactNode {
  return (
    <Text size="sm" ta="center">
      {prompt}{' '}
      <Anchor component={Link} to={to}>
        {children}
      </Anchor>
    </Text>
  );
}

/** The way back from the password pages to sign-in. */
export function BackToSignIn(): ReactNode {
  return (
    <Anchor component={Link} to="/signin" size="sm" ta="center">
      Back to sign in
    </Anchor>
  );
}
